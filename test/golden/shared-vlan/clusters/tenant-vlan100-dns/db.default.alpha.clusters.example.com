; oooi-digest: c37feb3d21b2d2d66a6a5ea4faf6b49fa74e8ff930ca9e054a824910cc08bff8
$ORIGIN alpha.clusters.example.com.
$TTL 30
@ IN SOA ns.alpha.clusters.example.com. hostmaster.alpha.clusters.example.com. 1 7200 3600 1209600 30
@ IN NS ns.alpha.clusters.example.com.
ns IN A 127.0.0.1
api IN A 172.30.200.10
api-int IN A 172.30.200.10
ignition IN A 172.30.200.10
konnectivity IN A 172.30.200.10
oauth IN A 172.30.200.10
