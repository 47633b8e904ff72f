; oooi-digest: 7a55d1aa170663d8a2fc68b1107d3cd80f2f53ec89a8f3037ff99c16d59f40d5
$ORIGIN konnectivity.gamma.clusters.example.com.
$TTL 30
@ IN SOA ns.konnectivity.gamma.clusters.example.com. hostmaster.konnectivity.gamma.clusters.example.com. 1 7200 3600 1209600 30
@ IN NS ns.konnectivity.gamma.clusters.example.com.
ns IN A 192.0.2.3
@ IN A 192.0.2.4
