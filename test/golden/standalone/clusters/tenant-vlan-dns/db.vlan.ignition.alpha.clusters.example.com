; oooi-digest: 541c7d88dc953188e8484e9a1ca4fa2fbedce22205f1a31f5516ffa3ebfb8e4c
$ORIGIN ignition.alpha.clusters.example.com.
$TTL 30
@ IN SOA ns.ignition.alpha.clusters.example.com. hostmaster.ignition.alpha.clusters.example.com. 1 7200 3600 1209600 30
@ IN NS ns.ignition.alpha.clusters.example.com.
ns IN A 127.0.8.3
@ IN A 127.0.8.4
