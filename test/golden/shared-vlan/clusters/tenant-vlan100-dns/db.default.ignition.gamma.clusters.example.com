; oooi-digest: 26f515056e70bde92fd042617cdd1b6556563ccce83936b99c03659a4d71a8aa
$ORIGIN ignition.gamma.clusters.example.com.
$TTL 30
@ IN SOA ns.ignition.gamma.clusters.example.com. hostmaster.ignition.gamma.clusters.example.com. 1 7200 3600 1209600 30
@ IN NS ns.ignition.gamma.clusters.example.com.
ns IN A 127.0.0.1
@ IN A 172.30.200.10
