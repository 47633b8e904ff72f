; oooi-digest: 319b7788b2b42e0d57b1e06a76741b08ef6a207f35378063baff6189dada5a1d
$ORIGIN oauth.example-hcp.clusters.example.com.
$TTL 30
@ IN SOA ns.oauth.example-hcp.clusters.example.com. hostmaster.oauth.example-hcp.clusters.example.com. 1 7200 3600 1209600 30
@ IN NS ns.oauth.example-hcp.clusters.example.com.
ns IN A 192.0.2.3
@ IN A 192.0.2.4
