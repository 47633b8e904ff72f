; oooi-digest: de7c43a39d3e02744025035837a853a6e90279320d685171dd48d3b0c5c34e7c
$ORIGIN oauth.example-hcp.clusters.example.com.
$TTL 30
@ IN SOA ns.oauth.example-hcp.clusters.example.com. hostmaster.oauth.example-hcp.clusters.example.com. 1 7200 3600 1209600 30
@ IN NS ns.oauth.example-hcp.clusters.example.com.
ns IN A 127.0.0.1
@ IN A 172.30.200.10
