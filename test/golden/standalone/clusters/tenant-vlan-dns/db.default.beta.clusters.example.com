; oooi-digest: 20d34e07806cdfcf2ecdc42dadc4262e91e8c9679033a4419a5b95630580c0ce
$ORIGIN beta.clusters.example.com.
$TTL 30
@ IN SOA ns.beta.clusters.example.com. hostmaster.beta.clusters.example.com. 1 7200 3600 1209600 30
@ IN NS ns.beta.clusters.example.com.
ns IN A 127.0.0.1
api IN A 172.30.200.10
api-int IN A 172.30.200.10
ignition IN A 172.30.200.10
konnectivity IN A 172.30.200.10
oauth IN A 172.30.200.10
