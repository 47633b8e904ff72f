; oooi-digest: 297890b0ef32af53eaad3850a8583d446f8be33a5647c4d9ebbcd5b4811e596b
$ORIGIN example-hcp.clusters.example.com.
$TTL 30
@ IN SOA ns.example-hcp.clusters.example.com. hostmaster.example-hcp.clusters.example.com. 1 7200 3600 1209600 30
@ IN NS ns.example-hcp.clusters.example.com.
ns IN A 192.0.2.3
api IN A 192.0.2.4
api-int IN A 192.0.2.4
ignition IN A 192.0.2.4
konnectivity IN A 192.0.2.4
oauth IN A 192.0.2.4
