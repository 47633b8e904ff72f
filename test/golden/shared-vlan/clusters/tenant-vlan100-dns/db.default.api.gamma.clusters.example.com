; oooi-digest: 6e1592119900d6ca42760573ae64031db1a01330cc2b48d287f2972ad532c90e
$ORIGIN api.gamma.clusters.example.com.
$TTL 30
@ IN SOA ns.api.gamma.clusters.example.com. hostmaster.api.gamma.clusters.example.com. 1 7200 3600 1209600 30
@ IN NS ns.api.gamma.clusters.example.com.
ns IN A 127.0.0.1
@ IN A 172.30.200.10
