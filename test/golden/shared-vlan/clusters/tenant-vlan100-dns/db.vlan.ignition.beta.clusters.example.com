; oooi-digest: fc0e3c4465b2a77bcbfeeda0bc7009f185bbd7a0eb0579cea558ab0de93f8b94
$ORIGIN ignition.beta.clusters.example.com.
$TTL 30
@ IN SOA ns.ignition.beta.clusters.example.com. hostmaster.ignition.beta.clusters.example.com. 1 7200 3600 1209600 30
@ IN NS ns.ignition.beta.clusters.example.com.
ns IN A 192.0.2.3
@ IN A 192.0.2.4
