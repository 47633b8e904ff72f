; oooi-digest: c5eacb7aa0bbe12aa50334a48d99ae2d1299e07f2a73e2974a11386fc80ec656
$ORIGIN api.example-hcp.clusters.example.com.
$TTL 30
@ IN SOA ns.api.example-hcp.clusters.example.com. hostmaster.api.example-hcp.clusters.example.com. 1 7200 3600 1209600 30
@ IN NS ns.api.example-hcp.clusters.example.com.
ns IN A 192.0.2.3
@ IN A 192.0.2.4
