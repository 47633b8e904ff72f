; oooi-digest: e2b2add178acc970a6a74e3bf3153df88df202b5381a85bb5954cc15b1b3682e
$ORIGIN alpha.clusters.example.com.
$TTL 30
@ IN SOA ns.alpha.clusters.example.com. hostmaster.alpha.clusters.example.com. 1 7200 3600 1209600 30
@ IN NS ns.alpha.clusters.example.com.
ns IN A 192.0.2.3
api IN A 192.0.2.4
api-int IN A 192.0.2.4
ignition IN A 192.0.2.4
konnectivity IN A 192.0.2.4
oauth IN A 192.0.2.4
