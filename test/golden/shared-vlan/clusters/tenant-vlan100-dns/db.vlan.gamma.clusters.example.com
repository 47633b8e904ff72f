; oooi-digest: c562396a43091dad197b2121aed1675bfe005c0d618379bfeee1a66f4e761b4a
$ORIGIN gamma.clusters.example.com.
$TTL 30
@ IN SOA ns.gamma.clusters.example.com. hostmaster.gamma.clusters.example.com. 1 7200 3600 1209600 30
@ IN NS ns.gamma.clusters.example.com.
ns IN A 192.0.2.3
api IN A 192.0.2.4
api-int IN A 192.0.2.4
ignition IN A 192.0.2.4
konnectivity IN A 192.0.2.4
oauth IN A 192.0.2.4
