; oooi-digest: 9e1d82ee1f8f631494cba0770ddd2f2183b4c017803c82a14d41ee3debd8cd3c
$ORIGIN ignition.alpha.clusters.example.com.
$TTL 30
@ IN SOA ns.ignition.alpha.clusters.example.com. hostmaster.ignition.alpha.clusters.example.com. 1 7200 3600 1209600 30
@ IN NS ns.ignition.alpha.clusters.example.com.
ns IN A 127.0.0.1
@ IN A 172.30.200.10
