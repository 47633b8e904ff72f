; oooi-digest: cf340ee539706386b1349c3cec699b3876b3e3590633e22fc012023f569cd58c
$ORIGIN apps.alpha.clusters.example.com.
$TTL 30
@ IN SOA ns.apps.alpha.clusters.example.com. hostmaster.apps.alpha.clusters.example.com. 1 7200 3600 1209600 30
@ IN NS ns.apps.alpha.clusters.example.com.
ns IN A 127.0.8.3
* IN A 127.0.8.200
