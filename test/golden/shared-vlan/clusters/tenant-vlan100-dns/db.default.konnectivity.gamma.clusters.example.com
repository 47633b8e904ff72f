; oooi-digest: 018eb62a175190af5997674fbfafc0661568d705462cef49974a9691e0085d55
$ORIGIN konnectivity.gamma.clusters.example.com.
$TTL 30
@ IN SOA ns.konnectivity.gamma.clusters.example.com. hostmaster.konnectivity.gamma.clusters.example.com. 1 7200 3600 1209600 30
@ IN NS ns.konnectivity.gamma.clusters.example.com.
ns IN A 127.0.0.1
@ IN A 172.30.200.10
