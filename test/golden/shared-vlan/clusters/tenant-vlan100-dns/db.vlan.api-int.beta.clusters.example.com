; oooi-digest: 97be7f9514e13d70ac319aa1f683c0e79d8554ea7f1189b9ee08642e88afa1f4
$ORIGIN api-int.beta.clusters.example.com.
$TTL 30
@ IN SOA ns.api-int.beta.clusters.example.com. hostmaster.api-int.beta.clusters.example.com. 1 7200 3600 1209600 30
@ IN NS ns.api-int.beta.clusters.example.com.
ns IN A 192.0.2.3
@ IN A 192.0.2.4
