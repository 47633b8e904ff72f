; oooi-digest: 72722b2515c408d7eb3485f7edfee407186a5ea41554b2925c468eab1989faf7
$ORIGIN ignition.beta.clusters.example.com.
$TTL 30
@ IN SOA ns.ignition.beta.clusters.example.com. hostmaster.ignition.beta.clusters.example.com. 1 7200 3600 1209600 30
@ IN NS ns.ignition.beta.clusters.example.com.
ns IN A 127.0.0.1
@ IN A 172.30.200.10
