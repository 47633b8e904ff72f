; oooi-digest: 6abc46ab953a9e44e8720aa2f25cb897cc98d41c62dc80ee92a890a18970fd63
$ORIGIN api-int.example-hcp.clusters.example.com.
$TTL 30
@ IN SOA ns.api-int.example-hcp.clusters.example.com. hostmaster.api-int.example-hcp.clusters.example.com. 1 7200 3600 1209600 30
@ IN NS ns.api-int.example-hcp.clusters.example.com.
ns IN A 127.0.0.1
@ IN A 172.30.200.10
