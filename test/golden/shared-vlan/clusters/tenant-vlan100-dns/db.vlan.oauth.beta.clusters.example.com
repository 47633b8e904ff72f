; oooi-digest: 5ae0f8f4e556b9213a2466a32ae16e82e591e56df51bf1609eb22ede656f60e6
$ORIGIN oauth.beta.clusters.example.com.
$TTL 30
@ IN SOA ns.oauth.beta.clusters.example.com. hostmaster.oauth.beta.clusters.example.com. 1 7200 3600 1209600 30
@ IN NS ns.oauth.beta.clusters.example.com.
ns IN A 192.0.2.3
@ IN A 192.0.2.4
