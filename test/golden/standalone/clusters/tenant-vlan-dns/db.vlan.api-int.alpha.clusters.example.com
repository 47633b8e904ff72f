; oooi-digest: 4b0a05f487075d8ec6981b6c0355f992434f9cd4963390601fc4a69b078c3348
$ORIGIN api-int.alpha.clusters.example.com.
$TTL 30
@ IN SOA ns.api-int.alpha.clusters.example.com. hostmaster.api-int.alpha.clusters.example.com. 1 7200 3600 1209600 30
@ IN NS ns.api-int.alpha.clusters.example.com.
ns IN A 127.0.8.3
@ IN A 127.0.8.4
