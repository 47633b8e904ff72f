; oooi-digest: 0fd1ea7ca85bb3753c7676297e21d20f0f9212627a4fa07709d96286981543ae
$ORIGIN oauth.gamma.clusters.example.com.
$TTL 30
@ IN SOA ns.oauth.gamma.clusters.example.com. hostmaster.oauth.gamma.clusters.example.com. 1 7200 3600 1209600 30
@ IN NS ns.oauth.gamma.clusters.example.com.
ns IN A 127.0.0.1
@ IN A 172.30.200.10
