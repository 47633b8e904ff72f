; oooi-digest: 649b6c2a5c41661d489828af97954cfd507a120ae60f6263460d55a054bcdc97
$ORIGIN konnectivity.example-hcp.clusters.example.com.
$TTL 30
@ IN SOA ns.konnectivity.example-hcp.clusters.example.com. hostmaster.konnectivity.example-hcp.clusters.example.com. 1 7200 3600 1209600 30
@ IN NS ns.konnectivity.example-hcp.clusters.example.com.
ns IN A 192.0.2.3
@ IN A 192.0.2.4
