; oooi-digest: 235c4a4302424f24e1d0e4114ce054e806602908b2b367a77dfa7f01c7ecd8b4
$ORIGIN apps.example-hcp.clusters.example.com.
$TTL 30
@ IN SOA ns.apps.example-hcp.clusters.example.com. hostmaster.apps.example-hcp.clusters.example.com. 1 7200 3600 1209600 30
@ IN NS ns.apps.example-hcp.clusters.example.com.
ns IN A 127.0.0.1
* IN A 172.30.200.10
