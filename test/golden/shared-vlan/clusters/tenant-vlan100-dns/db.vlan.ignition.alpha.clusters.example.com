; oooi-digest: 15ff8bfee35d967da99430e4a28849575fd0f40e14379ed432b87186dbd280e6
$ORIGIN ignition.alpha.clusters.example.com.
$TTL 30
@ IN SOA ns.ignition.alpha.clusters.example.com. hostmaster.ignition.alpha.clusters.example.com. 1 7200 3600 1209600 30
@ IN NS ns.ignition.alpha.clusters.example.com.
ns IN A 192.0.2.3
@ IN A 192.0.2.4
