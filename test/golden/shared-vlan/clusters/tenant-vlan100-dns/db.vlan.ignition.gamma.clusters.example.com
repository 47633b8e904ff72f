; oooi-digest: 94c3b3cd7f9fb9834191af0d5769599fa872f69015fdafda31e8e8f78c586dd9
$ORIGIN ignition.gamma.clusters.example.com.
$TTL 30
@ IN SOA ns.ignition.gamma.clusters.example.com. hostmaster.ignition.gamma.clusters.example.com. 1 7200 3600 1209600 30
@ IN NS ns.ignition.gamma.clusters.example.com.
ns IN A 192.0.2.3
@ IN A 192.0.2.4
