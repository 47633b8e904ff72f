; oooi-digest: 34eb23f1d6c31a7faa594c5df8ab5971b0cc775d538802fb70d5ae1905ed9d2f
$ORIGIN oauth.alpha.clusters.example.com.
$TTL 30
@ IN SOA ns.oauth.alpha.clusters.example.com. hostmaster.oauth.alpha.clusters.example.com. 1 7200 3600 1209600 30
@ IN NS ns.oauth.alpha.clusters.example.com.
ns IN A 127.0.8.3
@ IN A 127.0.8.4
