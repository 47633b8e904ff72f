; oooi-digest: c40158192f7ed8757b403e51dd9b1443b8d1f0035dcdc430826f748dbab5d7fe
$ORIGIN api-int.alpha.clusters.example.com.
$TTL 30
@ IN SOA ns.api-int.alpha.clusters.example.com. hostmaster.api-int.alpha.clusters.example.com. 1 7200 3600 1209600 30
@ IN NS ns.api-int.alpha.clusters.example.com.
ns IN A 127.0.0.1
@ IN A 172.30.200.10
