; oooi-digest: a735d85571402d72d48527cc171b3344193e69b1342ac94071469bedf3573dca
$ORIGIN konnectivity.example-hcp.clusters.example.com.
$TTL 30
@ IN SOA ns.konnectivity.example-hcp.clusters.example.com. hostmaster.konnectivity.example-hcp.clusters.example.com. 1 7200 3600 1209600 30
@ IN NS ns.konnectivity.example-hcp.clusters.example.com.
ns IN A 127.0.0.1
@ IN A 172.30.200.10
