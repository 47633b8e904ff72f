; oooi-digest: 04d7513e4c784cfbd4345e12f180a602c4a6d2eb3936873f0c653587ad741fa3
$ORIGIN api-int.example-hcp.clusters.example.com.
$TTL 30
@ IN SOA ns.api-int.example-hcp.clusters.example.com. hostmaster.api-int.example-hcp.clusters.example.com. 1 7200 3600 1209600 30
@ IN NS ns.api-int.example-hcp.clusters.example.com.
ns IN A 192.0.2.3
@ IN A 192.0.2.4
