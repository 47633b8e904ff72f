; oooi-digest: eb500d6868ed653e085927105757b771359710cb6e4042a1065bded6a8d3ed0b
$ORIGIN api.beta.clusters.example.com.
$TTL 30
@ IN SOA ns.api.beta.clusters.example.com. hostmaster.api.beta.clusters.example.com. 1 7200 3600 1209600 30
@ IN NS ns.api.beta.clusters.example.com.
ns IN A 192.0.2.3
@ IN A 192.0.2.4
