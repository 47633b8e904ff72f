; oooi-digest: 50d6a35c4711412fc0f9e139eb601da42279b50892f3dc31b99a3e8a8edf5ac3
$ORIGIN ignition.beta.clusters.example.com.
$TTL 30
@ IN SOA ns.ignition.beta.clusters.example.com. hostmaster.ignition.beta.clusters.example.com. 1 7200 3600 1209600 30
@ IN NS ns.ignition.beta.clusters.example.com.
ns IN A 127.0.8.3
@ IN A 127.0.8.4
