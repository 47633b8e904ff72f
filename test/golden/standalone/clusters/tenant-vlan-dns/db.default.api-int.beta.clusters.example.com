; oooi-digest: 81019c6070884480ff054563e614076aeb2c3d07304919d77c19e94c01207260
$ORIGIN api-int.beta.clusters.example.com.
$TTL 30
@ IN SOA ns.api-int.beta.clusters.example.com. hostmaster.api-int.beta.clusters.example.com. 1 7200 3600 1209600 30
@ IN NS ns.api-int.beta.clusters.example.com.
ns IN A 127.0.0.1
@ IN A 172.30.200.10
