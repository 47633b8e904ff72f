; oooi-digest: 27e7c512df71cdd2de76098b636b3181729c2d5b01d85b6a433a2048e066829e
$ORIGIN api-int.gamma.clusters.example.com.
$TTL 30
@ IN SOA ns.api-int.gamma.clusters.example.com. hostmaster.api-int.gamma.clusters.example.com. 1 7200 3600 1209600 30
@ IN NS ns.api-int.gamma.clusters.example.com.
ns IN A 192.0.2.3
@ IN A 192.0.2.4
