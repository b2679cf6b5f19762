// nginx in front of replicas on loopback ports, with the upstream settings of docs/guides/deploying.md
// ("Behind nginx"), in the foreground and with every file in one directory: what the fleet's benchmark
// (fleet-change.ts) and its end-to-end test (test/fleet-nginx.e2e.test.ts) both run.
import { join } from 'node:path'

export function nginxConfig (dir: string, port: number, upstreams: number[]): string {
  const temp = join(dir, 'temp')
  return `${process.getuid?.() === 0 ? 'user root root;\n' : ''}daemon off;
worker_processes 1;
pid ${join(dir, 'nginx.pid')};
error_log ${join(dir, 'error.log')} warn;
events { worker_connections 256; }
http {
  access_log off;
  client_body_temp_path ${temp};
  proxy_temp_path ${temp};
  fastcgi_temp_path ${temp};
  uwsgi_temp_path ${temp};
  scgi_temp_path ${temp};
  upstream explore_replicas {
    ${upstreams.map(p => `server 127.0.0.1:${p} max_fails=2 fail_timeout=10s;`).join('\n    ')}
    keepalive 32;
  }
  server {
    listen 127.0.0.1:${port};
    location / {
      proxy_pass http://explore_replicas;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header Host $host;
      proxy_next_upstream error timeout http_502 http_503;
    }
  }
}
`
}
