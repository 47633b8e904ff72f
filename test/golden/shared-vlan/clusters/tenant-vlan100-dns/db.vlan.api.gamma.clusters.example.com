; oooi-digest: 0b22aa3e7804396af0851c55e333485ae00610b630098db3017893a01d3d1166
$ORIGIN api.gamma.clusters.example.com.
$TTL 30
@ IN SOA ns.api.gamma.clusters.example.com. hostmaster.api.gamma.clusters.example.com. 1 7200 3600 1209600 30
@ IN NS ns.api.gamma.clusters.example.com.
ns IN A 192.0.2.3
@ IN A 192.0.2.4
