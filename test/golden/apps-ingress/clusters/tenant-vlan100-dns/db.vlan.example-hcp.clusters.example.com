; oooi-digest: 699c8c2ff328f2b24a44832ec7737a4f6a7e9abb321f0dfe9514419f0190e35d
$ORIGIN example-hcp.clusters.example.com.
$TTL 30
@ IN SOA ns.example-hcp.clusters.example.com. hostmaster.example-hcp.clusters.example.com. 1 7200 3600 1209600 30
@ IN NS ns.example-hcp.clusters.example.com.
ns IN A 192.0.2.3
*.apps IN A 192.0.2.200
api IN A 192.0.2.4
api-int IN A 192.0.2.4
ignition IN A 192.0.2.4
konnectivity IN A 192.0.2.4
oauth IN A 192.0.2.4
