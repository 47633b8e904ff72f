; oooi-digest: f65a8e7a2523ca1dd87ccbd307af43d255cf8af8162ac696418f1b239f15a0d8
$ORIGIN example-hcp.clusters.example.com.
$TTL 30
@ IN SOA ns.example-hcp.clusters.example.com. hostmaster.example-hcp.clusters.example.com. 1 7200 3600 1209600 30
@ IN NS ns.example-hcp.clusters.example.com.
ns IN A 127.0.0.1
api IN A 172.30.200.10
api-int IN A 172.30.200.10
ignition IN A 172.30.200.10
konnectivity IN A 172.30.200.10
oauth IN A 172.30.200.10
