; oooi-digest: 81c158c0ad468fc878f63359a51717821b2c51b37594388523969fa76a55367c
$ORIGIN konnectivity.alpha.clusters.example.com.
$TTL 30
@ IN SOA ns.konnectivity.alpha.clusters.example.com. hostmaster.konnectivity.alpha.clusters.example.com. 1 7200 3600 1209600 30
@ IN NS ns.konnectivity.alpha.clusters.example.com.
ns IN A 127.0.0.1
@ IN A 172.30.200.10
