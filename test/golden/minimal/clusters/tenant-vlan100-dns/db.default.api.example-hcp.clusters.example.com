; oooi-digest: 0fd7e26a2664eaf458b018aab101e95e533b95dcc8a16b330ed86686a05df9a1
$ORIGIN api.example-hcp.clusters.example.com.
$TTL 30
@ IN SOA ns.api.example-hcp.clusters.example.com. hostmaster.api.example-hcp.clusters.example.com. 1 7200 3600 1209600 30
@ IN NS ns.api.example-hcp.clusters.example.com.
ns IN A 127.0.0.1
@ IN A 172.30.200.10
