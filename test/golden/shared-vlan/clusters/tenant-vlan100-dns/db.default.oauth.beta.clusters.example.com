; oooi-digest: 0354cdac7c415a54483c00f38fe15604a4be121e3600de4c417cb52e86130aac
$ORIGIN oauth.beta.clusters.example.com.
$TTL 30
@ IN SOA ns.oauth.beta.clusters.example.com. hostmaster.oauth.beta.clusters.example.com. 1 7200 3600 1209600 30
@ IN NS ns.oauth.beta.clusters.example.com.
ns IN A 127.0.0.1
@ IN A 172.30.200.10
