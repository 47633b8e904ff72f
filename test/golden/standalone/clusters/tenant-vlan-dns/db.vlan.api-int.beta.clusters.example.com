; oooi-digest: 0f00e206477768bdfbffe4e64dd472ae7fa5ed37b839e7c6f78a7d31221d54a0
$ORIGIN api-int.beta.clusters.example.com.
$TTL 30
@ IN SOA ns.api-int.beta.clusters.example.com. hostmaster.api-int.beta.clusters.example.com. 1 7200 3600 1209600 30
@ IN NS ns.api-int.beta.clusters.example.com.
ns IN A 127.0.8.3
@ IN A 127.0.8.4
