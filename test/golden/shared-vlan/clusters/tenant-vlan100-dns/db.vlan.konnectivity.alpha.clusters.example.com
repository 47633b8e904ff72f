; oooi-digest: ba114bd43dc082558df15a106f4977845067f052bf82d777e6ba5ed3a414249b
$ORIGIN konnectivity.alpha.clusters.example.com.
$TTL 30
@ IN SOA ns.konnectivity.alpha.clusters.example.com. hostmaster.konnectivity.alpha.clusters.example.com. 1 7200 3600 1209600 30
@ IN NS ns.konnectivity.alpha.clusters.example.com.
ns IN A 192.0.2.3
@ IN A 192.0.2.4
