; oooi-digest: 8e096b277a48228d3addb4bec6f7345961d38997c5bb7ab9b3053479e3c4a397
$ORIGIN apps.alpha.clusters.example.com.
$TTL 30
@ IN SOA ns.apps.alpha.clusters.example.com. hostmaster.apps.alpha.clusters.example.com. 1 7200 3600 1209600 30
@ IN NS ns.apps.alpha.clusters.example.com.
ns IN A 127.0.0.1
* IN A 172.30.200.10
