; oooi-digest: 52fd230eae641c782f48ed458e98726e853d3eeb39baec4c1de412b51ec5fd59
$ORIGIN ignition.example-hcp.clusters.example.com.
$TTL 30
@ IN SOA ns.ignition.example-hcp.clusters.example.com. hostmaster.ignition.example-hcp.clusters.example.com. 1 7200 3600 1209600 30
@ IN NS ns.ignition.example-hcp.clusters.example.com.
ns IN A 192.0.2.3
@ IN A 192.0.2.4
