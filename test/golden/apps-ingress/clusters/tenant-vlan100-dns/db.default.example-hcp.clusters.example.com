; oooi-digest: 51957b28609fc1662a95937786db43dd5ec8ec90f0472a67e391b5971ed63870
$ORIGIN example-hcp.clusters.example.com.
$TTL 30
@ IN SOA ns.example-hcp.clusters.example.com. hostmaster.example-hcp.clusters.example.com. 1 7200 3600 1209600 30
@ IN NS ns.example-hcp.clusters.example.com.
ns IN A 127.0.0.1
*.apps IN A 172.30.200.10
api IN A 172.30.200.10
api-int IN A 172.30.200.10
ignition IN A 172.30.200.10
konnectivity IN A 172.30.200.10
oauth IN A 172.30.200.10
