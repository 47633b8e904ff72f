; oooi-digest: 0b5f47aa1b08b341a202791cbdcf5c41f7269d24314ee45f093f7da024adabda
$ORIGIN ignition.example-hcp.clusters.example.com.
$TTL 30
@ IN SOA ns.ignition.example-hcp.clusters.example.com. hostmaster.ignition.example-hcp.clusters.example.com. 1 7200 3600 1209600 30
@ IN NS ns.ignition.example-hcp.clusters.example.com.
ns IN A 127.0.0.1
@ IN A 172.30.200.10
