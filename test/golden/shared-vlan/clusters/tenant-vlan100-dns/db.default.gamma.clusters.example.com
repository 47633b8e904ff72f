; oooi-digest: 752261b3698c2a8fb9b715f2bfc4d8d6d614929af84b8e902d71938c7cdeac07
$ORIGIN gamma.clusters.example.com.
$TTL 30
@ IN SOA ns.gamma.clusters.example.com. hostmaster.gamma.clusters.example.com. 1 7200 3600 1209600 30
@ IN NS ns.gamma.clusters.example.com.
ns IN A 127.0.0.1
api IN A 172.30.200.10
api-int IN A 172.30.200.10
ignition IN A 172.30.200.10
konnectivity IN A 172.30.200.10
oauth IN A 172.30.200.10
