; oooi-digest: fbb847daed87d23c277879c0e3fbcc364f0613285f72b383589aec2fd8838a19
$ORIGIN api.alpha.clusters.example.com.
$TTL 30
@ IN SOA ns.api.alpha.clusters.example.com. hostmaster.api.alpha.clusters.example.com. 1 7200 3600 1209600 30
@ IN NS ns.api.alpha.clusters.example.com.
ns IN A 192.0.2.3
@ IN A 192.0.2.4
