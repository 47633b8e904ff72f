; oooi-digest: 8900b5430326b84f3b8a91559569acafba8cf32ab4ba59af8298b605493b6b9f
$ORIGIN apps.example-hcp.clusters.example.com.
$TTL 30
@ IN SOA ns.apps.example-hcp.clusters.example.com. hostmaster.apps.example-hcp.clusters.example.com. 1 7200 3600 1209600 30
@ IN NS ns.apps.example-hcp.clusters.example.com.
ns IN A 192.0.2.3
* IN A 192.0.2.200
