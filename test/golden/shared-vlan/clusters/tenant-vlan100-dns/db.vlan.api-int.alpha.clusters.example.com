; oooi-digest: 3e7874f349d60eac8368211c8a0f07cb2104a708a9373395bf4a9263f2b68b03
$ORIGIN api-int.alpha.clusters.example.com.
$TTL 30
@ IN SOA ns.api-int.alpha.clusters.example.com. hostmaster.api-int.alpha.clusters.example.com. 1 7200 3600 1209600 30
@ IN NS ns.api-int.alpha.clusters.example.com.
ns IN A 192.0.2.3
@ IN A 192.0.2.4
