; oooi-digest: e777cb06d0972ccea8bf053e0fa8793849e34e95f874cf8da7da26759fa689e4
$ORIGIN api-int.gamma.clusters.example.com.
$TTL 30
@ IN SOA ns.api-int.gamma.clusters.example.com. hostmaster.api-int.gamma.clusters.example.com. 1 7200 3600 1209600 30
@ IN NS ns.api-int.gamma.clusters.example.com.
ns IN A 127.0.0.1
@ IN A 172.30.200.10
