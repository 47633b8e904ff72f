; oooi-digest: 45de72bb581a5dd9b3e7d02e8532bfcefd5a3f4f4141e16b0ae038e21194c6f2
$ORIGIN konnectivity.beta.clusters.example.com.
$TTL 30
@ IN SOA ns.konnectivity.beta.clusters.example.com. hostmaster.konnectivity.beta.clusters.example.com. 1 7200 3600 1209600 30
@ IN NS ns.konnectivity.beta.clusters.example.com.
ns IN A 127.0.0.1
@ IN A 172.30.200.10
