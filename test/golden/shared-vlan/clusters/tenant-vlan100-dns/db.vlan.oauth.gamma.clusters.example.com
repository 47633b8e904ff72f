; oooi-digest: 4938e3521e2ae28d9ae97964fc8aa321dd8fd4ec85d7accfab1a20b3150e2535
$ORIGIN oauth.gamma.clusters.example.com.
$TTL 30
@ IN SOA ns.oauth.gamma.clusters.example.com. hostmaster.oauth.gamma.clusters.example.com. 1 7200 3600 1209600 30
@ IN NS ns.oauth.gamma.clusters.example.com.
ns IN A 192.0.2.3
@ IN A 192.0.2.4
