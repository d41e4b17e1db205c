const app = document.getElementById('app');
app.textContent = 'Task tracker';
