; oooi-digest: a701025360e6118a0dba8583818da385cd9022a8c67d2665781a2f413b9badca
$ORIGIN oauth.alpha.clusters.example.com.
$TTL 30
@ IN SOA ns.oauth.alpha.clusters.example.com. hostmaster.oauth.alpha.clusters.example.com. 1 7200 3600 1209600 30
@ IN NS ns.oauth.alpha.clusters.example.com.
ns IN A 192.0.2.3
@ IN A 192.0.2.4
